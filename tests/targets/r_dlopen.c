/* r_dlopen: dlopen("libplug.so") by its bare name, found through the executable's own
 * DT_RUNPATH ($ORIGIN/lib; built with --enable-new-dtags). DT_RUNPATH applies only to the
 * object that calls dlopen, so a wrapper that calls dlopen on the target's behalf must not
 * change which object that is. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *h = dlopen("libplug.so", RTLD_NOW);
    if (!h) {
        printf("dlopen failed\n");
        return 1;
    }
    int (*f)(void) = (int (*)(void))dlsym(h, "plug_value");
    printf("plug_value=%d\n", f ? f() : -1);
    return 0;
}
