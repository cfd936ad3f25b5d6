/* r_tlsheap_keys: a library whose constructor makes 40 pthread keys, preloaded after the shim
 * (its constructor runs first), so 32 keys are in use when the shim starts. */
#include <pthread.h>

__attribute__((constructor)) static void make_keys(void)
{
    pthread_key_t k;
    for (int i = 0; i < 40; i++)
        pthread_key_create(&k, NULL);
}
