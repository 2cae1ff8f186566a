/**
 * The management key lives in this tab's sessionStorage only: never in a URL, a cookie or localStorage, and
 * gone when the tab closes.
 */
const slot = "switchyard.management-key";

export const session = {
  key: (): string | null => sessionStorage.getItem(slot),
  keep: (key: string) => sessionStorage.setItem(slot, key),
  forget: () => sessionStorage.removeItem(slot),
};
