/**
 * A use in percent (0–100) with one decimal, `<0.1%` for a use above 0 that would round
 * to 0.0 (16 of 262,144 conntrack entries): one spelling for the Conntrack pane, the
 * dashboard and `show conntrack`.
 */
export function percentText(percent: number): string {
  return percent > 0 && percent < 0.1 ? '<0.1%' : `${percent.toFixed(1)}%`;
}
