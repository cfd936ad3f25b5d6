/* debuginfod_gate.h: keeps libdwfl from loading libdebuginfod in a process where it could do
 * nothing (DEBUGINFOD_URLS unset or empty), see debuginfod_gate.c. */
#ifndef PERFSCOPE_DEBUGINFOD_GATE_H
#define PERFSCOPE_DEBUGINFOD_GATE_H

/* Reads DEBUGINFOD_URLS once (later calls do nothing) and closes the gate when it names no
 * server. Called before the first Dwfl is made; a gate never armed stays open. */
void debuginfod_gate_arm(void);

#endif
