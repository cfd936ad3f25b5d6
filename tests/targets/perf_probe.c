/* perf_probe: exits 0 when this process may open a user-space task-clock perf event on itself. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        perror("perf_event_open");
        return 1;
    }
    close((int)fd);
    return 0;
}
