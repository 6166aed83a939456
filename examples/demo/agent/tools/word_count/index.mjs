// Runs in the authored-tool host child, only after the call passed its capability and approval checks.
export async function handler(input, ctx) {
  const text = typeof input?.text === 'string' ? input.text : '';
  const words = text.trim() === '' ? 0 : text.trim().split(/\s+/u).length;
  const lines = text === '' ? 0 : text.split(/\r\n|\r|\n/u).length;
  ctx?.log?.(`counted ${words} words`);
  return { words, lines, characters: [...text].length };
}
