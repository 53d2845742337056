/** Every API route lives under this prefix; files are served under it too. */
export const API_PREFIX = '/api/v1'
