/* r_closerange: close_range with first > last is EINVAL, and closes nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    int fd = open("/dev/null", O_RDONLY);
    errno = 0;
    int r = close_range(5, 3, 0);
    printf("close_range(5, 3, 0) = %d errno=%s\n", r, strerror(errno));
    errno = 0;
    r = close_range(10, 5, 0);
    printf("close_range(10, 5, 0) = %d errno=%s\n", r, strerror(errno));
    printf("own descriptor still open: %s\n", fcntl(fd, F_GETFD) >= 0 ? "yes" : "no");
    return 0;
}
