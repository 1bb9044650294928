/**
 * The form a user is stored under: identity is case-insensitive, while the
 * signature covers the userId exactly as sent. (Which texts are user ids is a
 * rule of the protos, checked by src/validation/.)
 */
export function userKeyOf(userId: string): string {
  return userId.toLowerCase();
}
