/** Clock words shared by the header, reasons and reports. */

/** `ms` (since epoch) as the local wall-clock time `HH:MM:SS`, how the header and reasons name a read. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}
