/* machine_unit PROC_ROOT: format/machine.c's check over a fake process table (tests/t_machine.sh
 * makes it): prints the busy processes it counted ("busy N: pid comm, ...") and the kernel
 * threads it left out ("kernel K"). */
#include "machine.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    struct machine_state st;
    machine_check_in(argv[1], &st);
    printf("busy %d:", st.nbusy);
    for (int i = 0; i < st.nbusy && i < MACHINE_BUSY_KEPT; i++)
        printf(" %ld %s;", st.busy[i].pid, st.busy[i].comm);
    printf("\nkernel %d\n", st.nkernel);
    return 0;
}
