// Bounded waits that leave no timer behind: a pending timer would keep the CLI alive after its work.
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.then(() => true as const), expired]);
  } finally {
    clearTimeout(timer);
  }
}
