#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    usleep(100000);
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) prctl(PR_SET_KEEPCAPS, i & 1, 0, 0, 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%d calls: %.1f us/call\n", n, ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1e3);
    return 0;
}
