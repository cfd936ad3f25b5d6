/* r_tlsheap_lib: a library with a 64 KiB dynamic TLS block (r_tlsheap loads copies of it):
 * too big for malloc's thread cache, so freeing it takes the arena's lock. */
__thread char tls_block[64 * 1024];
void touch(void) { tls_block[0]++; }
