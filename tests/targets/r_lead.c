/* r_lead LEADER_S CHILD_S: the leader process lives LEADER_S seconds; two children live
 * CHILD_S and CHILD_S + 1 seconds, so leadership passes to each of them in turn. */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    if (fork() == 0) {
        sleep((unsigned)atoi(argv[2]));
        _exit(0);
    }
    if (fork() == 0) {
        sleep((unsigned)atoi(argv[2]) + 1);
        _exit(0);
    }
    sleep((unsigned)atoi(argv[1]));
    return 0;
}
