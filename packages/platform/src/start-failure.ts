/**
 * The one line a start failure caused by the listening address prints: the port taken or not
 * permitted, or HOST not an address of this machine, under the variable the operator set (the
 * embedded runner's API_PORT and COLLAB_PORT reach the services as PORT). Undefined for any other
 * failure, which is logged with its stack.
 */
export function listenFailure(
  error: unknown,
  listening: { portVariable: string; port: number; host: string },
): string | undefined {
  const { code, syscall, hostname } = (error ?? {}) as NodeJS.ErrnoException & { hostname?: string };
  const { portVariable, port, host } = listening;
  if (syscall === 'listen' && code === 'EADDRINUSE') return `${portVariable} ${port} is already in use`;
  if (syscall === 'listen' && code === 'EACCES') {
    return `${portVariable} ${port} may not be bound by this user (permission denied)`;
  }
  if (
    (syscall === 'listen' && code === 'EADDRNOTAVAIL') ||
    (syscall === 'getaddrinfo' && hostname === host)
  ) {
    return `HOST ${host} is not an address of this machine`;
  }
  return undefined;
}
