// Compiled from retry-with-backoff.ts (executeSkill runs this file).
export function retryWithBackoff(input) {
  const base = input.baseMs ?? 100;
  const cap = input.capMs ?? 10000;
  const delaysMs = [];
  for (let i = 0; i < input.attempts; i++) delaysMs.push(Math.min(cap, base * 2 ** i));
  return { delaysMs };
}
