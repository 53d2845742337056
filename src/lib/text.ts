/** Lowercased ASCII letters, digits and underscores, as usernames allow. */
export function toUsernameBase(fullName: string): string {
  return fullName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase()
}

/** Text made safe to place in HTML, in an element or a quoted attribute. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!)
