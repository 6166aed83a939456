// The one display sanitiser: every hidden character visible, the backslash doubled (injective),
// a log keeps newline and tab, a cut says so, JSON stays the same value.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { displayJson, displayPreview, displayText } from '../../src/redaction/index.js';

describe('displayText', () => {
  it('shows C0, DEL, C1, bidi, zero-width, separators and BOM as escapes', () => {
    assert.equal(displayText('a\u001b[8mb\r\n\t\u0007\u007f\u0085'), 'a\\x1b[8mb\\r\\n\\t\\x07\\x7f\\x85');
    assert.equal(displayText('\u202e\u2066\u200b\u200f\u2028\u2029\ufeff'), '\\u202e\\u2066\\u200b\\u200f\\u2028\\u2029\\ufeff');
    assert.equal(displayText('tag\u{e0041}'), 'tag\\u{e0041}', 'a format character beyond the BMP');
    assert.equal(displayText('lone\ud800'), 'lone\\ud800');
    assert.equal(displayText('émoji 😀 ok'), 'émoji 😀 ok', 'printable text is untouched');
  });

  it('is injective: a backslash is doubled, so typed escape text never looks like a real control', () => {
    assert.notEqual(displayText('\\x1b'), displayText('\u001b'));
    assert.equal(displayText('\\x1b'), '\\\\x1b');
    assert.equal(displayText('C:\\dir'), 'C:\\\\dir');
  });

  it("a log keeps newline and tab but not carriage return (it could overwrite a line)", () => {
    assert.equal(displayText('a\tb\nc\rd\u001b', { keep: 'log' }), 'a\tb\nc\\rd\\x1b');
  });

  it('a cut preview says how much is missing and how to see it, and never splits a surrogate pair', () => {
    assert.equal(displayPreview('abcdef', 3, 'supervisor approvals show X prints all'), 'abc… [cut: 3 more characters; supervisor approvals show X prints all]');
    assert.equal(displayPreview('ab😀', 3), 'ab… [cut: 2 more characters]');
    assert.equal(displayPreview('a'.repeat(1235), 1), `a… [cut: 1,234 more characters]`);
    assert.equal(displayPreview('abc', 3), 'abc');
  });

  it('displayJson escapes what JSON.stringify leaves raw and parses back to the same value', () => {
    const value = { s: 'a\u007f\u0085\u202e\u2028\u{e0041}\u001b"\\' };
    const line = displayJson(value);
    assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f\u2028\u202e]|\u{e0041}/u);
    assert.deepEqual(JSON.parse(line), value);
  });
});
