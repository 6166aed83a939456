// HTML to readable text for a model: no scripts, styles or markup, entities decoded, whitespace
// collapsed, headings and paragraph breaks kept. A linear scan (indexOf, no backtracking regexes over
// the page), so a hostile page costs time proportional to its size, which fetchPage already bounds.

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

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', ensp: ' ', emsp: ' ', thinsp: ' ',
  copy: '©', reg: '®', trade: '™', hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’',
  ldquo: '“', rdquo: '”', sbquo: '‚', bdquo: '„', laquo: '«', raquo: '»', middot: '·', bull: '•',
  euro: '€', pound: '£', yen: '¥', cent: '¢', sect: '§', para: '¶', deg: '°', plusmn: '±', times: '×',
  divide: '÷', frac12: '½', frac14: '¼', frac34: '¾', shy: '', zwj: '', zwnj: '', larr: '←', rarr: '→',
  uarr: '↑', darr: '↓', harr: '↔', iexcl: '¡', iquest: '¿', micro: 'µ', acute: '´', uml: '¨',
  auml: 'ä', ouml: 'ö', uuml: 'ü', Auml: 'Ä', Ouml: 'Ö', Uuml: 'Ü', szlig: 'ß', eacute: 'é', egrave: 'è',
  ecirc: 'ê', aacute: 'á', agrave: 'à', acirc: 'â', ccedil: 'ç', ntilde: 'ñ', oacute: 'ó', iacute: 'í',
  uacute: 'ú', Eacute: 'É',
};

export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#[xX][0-9a-fA-F]{1,8}|#\d{1,10}|[A-Za-z][A-Za-z0-9]{1,31});?/g, (whole, body: string) => {
    if (body[0] === '#') {
      const cp = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      // NUL, surrogates and values past U+10FFFF are not characters (HTML maps them to U+FFFD).
      if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(cp);
    }
    return NAMED[body] ?? whole;
  });
}

const collapse = (s: string): string => s.replace(/[\s\u00a0]+/g, ' ').trim();

/** Skips a tag starting at `lt` (which is '<'); returns the index after its '>', honouring quoted attributes. */
function tagEnd(html: string, lt: number): number {
  let quote = '';
  for (let i = lt + 1; i < html.length; i++) {
    const c = html[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  return html.length;
}

export function readableText(html: string): ReadableText {
  const lower = html.toLowerCase();
  const out: string[] = [];
  let title = '';
  let i = 0;
  const text = (s: string): void => {
    // Line breaks in the source are just whitespace; only elements make structure.
    if (s) out.push(decodeEntities(s).replace(/[\r\n]+/g, ' '));
  };
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      text(html.slice(i));
      break;
    }
    text(html.slice(i, lt));
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end === -1 ? html.length : end + 3;
      continue;
    }
    const m = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(lt, lt + 40));
    if (!m) {
      if (html[lt + 1] === '!' || html[lt + 1] === '?') {
        i = tagEnd(html, lt); // doctype, CDATA opener, processing instruction
      } else {
        out.push('<'); // a bare '<' in text
        i = lt + 1;
      }
      continue;
    }
    const closing = m[1] === '/';
    const name = m[2]!.toLowerCase();
    i = tagEnd(html, lt);
    if (!closing && name === 'title') {
      const end = lower.indexOf('</title', i);
      if (!title) title = collapse(decodeEntities(html.slice(i, end === -1 ? html.length : end)));
      i = end === -1 ? html.length : tagEnd(html, end);
      continue;
    }
    if (!closing && SKIPPED.has(name) && !html.slice(lt, i).endsWith('/>')) {
      const end = lower.indexOf(`</${name}`, i);
      i = end === -1 ? html.length : tagEnd(html, end);
      continue;
    }
    if (/^h[1-6]$/.test(name)) out.push(closing ? '\n\n' : `\n\n${'#'.repeat(Number(name[1]))} `);
    else if (PARAGRAPH.has(name)) out.push('\n\n');
    else if (LINE.has(name)) {
      if (!closing) out.push(name === 'li' ? '\n- ' : '\n');
    }
    else if (CELL.has(name)) out.push(' ');
  }
  const body = out
    .join('')
    .split('\n')
    .map(collapse)
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title, text: body };
}
