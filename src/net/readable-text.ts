// HTML to readable text for a model: no scripts, styles or markup, entities decoded, whitespace
// collapsed, headings and paragraph breaks kept. Tokenized by htmlparser2 (a linear state machine,
// so a hostile page costs time proportional to its size, which fetchPage already bounds) with the
// full HTML entity table from `entities`; this file only decides what becomes text.
import { Parser } from 'htmlparser2';
import { decodeHTML } from 'entities';

export interface ReadableText {
  /** The <title>, decoded and collapsed; '' when there is none. */
  readonly title: string;
  /** The body text: paragraphs separated by a blank line, headings prefixed with '#' by level. */
  readonly text: string;
}

// Elements whose content is never text for a reader.
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas']);
const PARAGRAPH = new Set([
  'p', 'div', 'section', 'article', 'main', 'header', 'footer', 'nav', 'aside', 'blockquote', 'pre', 'ul', 'ol',
  'dl', 'table', 'form', 'fieldset', 'figure', 'figcaption', 'address', 'details', 'summary', 'hr', 'body', 'html',
]);
const LINE = new Set(['br', 'li', 'tr', 'dt', 'dd', 'caption', 'option']);
const CELL = new Set(['td', 'th']);

/** HTML character references, decoded as a browser decodes them in text (the full HTML table). */
export function decodeEntities(s: string): string {
  return s.includes('&') ? decodeHTML(s) : s;
}

const collapse = (s: string): string => s.replace(/[\s\u00a0]+/g, ' ').trim();

export function readableText(html: string): ReadableText {
  const out: string[] = [];
  let title: string | null = null;
  let inTitle = false;
  // Nesting depth inside elements whose content is never text (a <svg> inside a <noscript>, …).
  let skipped = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIPPED.has(name)) skipped++;
        else if (name === 'title') inTitle = title === null;
        if (skipped > 0) return;
        if (/^h[1-6]$/.test(name)) out.push(`\n\n${'#'.repeat(Number(name[1]))} `);
        else if (PARAGRAPH.has(name)) out.push('\n\n');
        else if (LINE.has(name)) out.push(name === 'li' ? '\n- ' : '\n');
        else if (CELL.has(name)) out.push(' ');
      },
      ontext(text) {
        if (inTitle) title = (title ?? '') + text;
        // Line breaks in the source are just whitespace; only elements make structure.
        else if (skipped === 0) out.push(text.replace(/[\r\n]+/g, ' '));
      },
      onclosetag(name) {
        if (SKIPPED.has(name)) skipped = Math.max(0, skipped - 1);
        else if (name === 'title') inTitle = false;
        if (skipped > 0) return;
        if (/^h[1-6]$/.test(name) || PARAGRAPH.has(name)) out.push('\n\n');
        else if (CELL.has(name)) out.push(' ');
      },
    },
    // Entities decoded with the full table; tag names lower-cased; script and style read as raw text.
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: false },
  );
  parser.end(html);
  const body = out
    .join('')
    .split('\n')
    .map(collapse)
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title: collapse(title ?? ''), text: body };
}
