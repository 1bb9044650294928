/**
 * The user id as the user is stored under it, lowercase: identity is
 * case-insensitive, while the signature covers the userId exactly as sent.
 * Past this function every `userId` of the services and the store is this
 * form. (Which texts are user ids is a rule of the protos, checked by
 * src/validation/.)
 */
export function canonicalUserId(userId: string): string {
  return userId.toLowerCase();
}
