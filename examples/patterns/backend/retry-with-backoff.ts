// Upper bounds of the waits between attempts: exponential, capped. Each real wait is a
// random value in [0, bound] (full jitter).
export interface BackoffInput {
  attempts: number;
  baseMs?: number;
  capMs?: number;
}

export function retryWithBackoff(input: BackoffInput): { delaysMs: number[] } {
  const base = input.baseMs ?? 100;
  const cap = input.capMs ?? 10_000;
  const delaysMs: number[] = [];
  for (let i = 0; i < input.attempts; i++) delaysMs.push(Math.min(cap, base * 2 ** i));
  return { delaysMs };
}
