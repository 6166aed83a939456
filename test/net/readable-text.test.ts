import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeEntities, readableText } from '../../src/net/readable-text.js';

describe('readableText', () => {
  it('keeps title, headings, paragraphs and list items; drops script, style, noscript, template and comments', () => {
    const html = `<!DOCTYPE html><html><head><title> Docs &amp; Notes </title>
      <style>body { color: red }</style><script>var secret = "<p>not text</p>";</script></head>
      <body><noscript>enable js</noscript><template><p>hidden</p></template><!-- a <p>comment</p> -->
      <h1>Main   heading</h1><p>First <b>bold</b>
      paragraph.</p><div>Second&nbsp;para</div><h2>Sub</h2><ul><li>one</li><li>two</li></ul>
      <SCRIPT type="text/javascript">alert('x')</SCRIPT><p>Cells:</p><table><tr><td>a</td><td>b</td></tr></table></body></html>`;
    const r = readableText(html);
    assert.equal(r.title, 'Docs & Notes');
    assert.equal(r.text, '# Main heading\n\nFirst bold paragraph.\n\nSecond para\n\n## Sub\n\n- one\n- two\n\nCells:\n\na b');
  });

  it('decodes named and numeric entities, and maps invalid code points to U+FFFD', () => {
    assert.equal(decodeEntities('&lt;a&gt; &quot;q&quot; &#39;s&#39; &#x1F600; &#128512; &copy; &unknown; &#0; &#xD800; &#x110000;'), '<a> "q" \'s\' 😀 😀 © &unknown; \ufffd \ufffd \ufffd');
    assert.equal(readableText('<p>5 &lt; 6 &amp;&amp; 7 &gt; 3</p>').text, '5 < 6 && 7 > 3');
  });

  it('decodes every HTML named reference, not a hand-picked few, and the legacy ones without a semicolon', () => {
    assert.equal(decodeEntities('&alpha;&hearts;&NotNestedGreaterGreater;&CounterClockwiseContourIntegral;&fjlig;'), 'α♥⪢̸∳fj');
    assert.equal(readableText('<p>&copy 2026 &AMP; &Eacute;cole &lt3</p>').text, '© 2026 & École <3');
    assert.equal(readableText('<title>R&eacute;sum&eacute; &mdash; CV</title><p>x</p>').title, 'Résumé — CV');
  });

  it('survives broken markup: unclosed script, stray <, quoted > in attributes', () => {
    assert.equal(readableText('<p>a < b</p><img alt="x > y">c').text, 'a < b\n\nc');
    assert.equal(readableText('<p>before</p><script>never closed <p>x</p>').text, 'before');
    assert.equal(readableText('<p>ok</p><!-- never closed').text, 'ok');
    assert.equal(readableText('plain text, no tags').text, 'plain text, no tags');
    assert.deepEqual(readableText(''), { title: '', text: '' });
  });

  it('stays linear on hostile input (many unclosed tags)', () => {
    const hostile = '<script'.repeat(200_000) + '<p>' + '<'.repeat(200_000);
    const started = Date.now();
    readableText(hostile);
    assert.ok(Date.now() - started < 5000);
  });
});
