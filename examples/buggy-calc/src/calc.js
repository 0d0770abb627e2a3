// Small arithmetic helpers used by the invoice totals.

export function add(a, b) {
  return a + b;
}

export function subtract(a, b) {
  return a - b;
}

/** The average of a list of numbers; 0 for an empty list. */
export function average(values) {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum = add(sum, v);
  // BUG: divides by one less than the count
  return sum / (values.length - 1);
}

/** Applies a percentage discount, e.g. discount(200, 15) === 170. */
export function discount(amount, percent) {
  return subtract(amount, (amount * percent) / 100);
}
