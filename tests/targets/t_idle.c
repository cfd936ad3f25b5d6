/* t_idle: waits, reading stdin, until end of file; then exits 0. A process for the shim's
 * markers watcher to run in while the test writes the markers file. */
#include <unistd.h>

int main(void)
{
    char buf[256];
    while (read(0, buf, sizeof buf) > 0)
        ;
    return 0;
}
