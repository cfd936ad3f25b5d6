/* many_fns.h: 4096 distinct small functions in a table, for targets whose stacks must keep
 * meeting return addresses an unwinder has not cached (m_dllock.c, m_unwself.c). Each function
 * does a little arithmetic and, when MANY_FNS_CALL is defined before this header, calls it
 * (void MANY_FNS_CALL(void)) first. Include it once per target. */
#ifndef MANY_FNS_H
#define MANY_FNS_H

#ifdef MANY_FNS_CALL
void MANY_FNS_CALL(void);
#define MANY_FNS_PROBE() MANY_FNS_CALL()
#else
#define MANY_FNS_PROBE() ((void)0)
#endif

#define F1(n) static __attribute__((noinline)) unsigned fn_##n(unsigned x) \
    { MANY_FNS_PROBE(); for (int i = 0; i < 40; i++) x = x * 2654435761u + 0x##n; return x; }
#define F16(p) F1(p##0) F1(p##1) F1(p##2) F1(p##3) F1(p##4) F1(p##5) F1(p##6) F1(p##7) \
    F1(p##8) F1(p##9) F1(p##a) F1(p##b) F1(p##c) F1(p##d) F1(p##e) F1(p##f)
#define F256(p) F16(p##0) F16(p##1) F16(p##2) F16(p##3) F16(p##4) F16(p##5) F16(p##6) F16(p##7) \
    F16(p##8) F16(p##9) F16(p##a) F16(p##b) F16(p##c) F16(p##d) F16(p##e) F16(p##f)
F256(0) F256(1) F256(2) F256(3) F256(4) F256(5) F256(6) F256(7)
F256(8) F256(9) F256(a) F256(b) F256(c) F256(d) F256(e) F256(f)

#define T1(n) fn_##n,
#define T16(p) T1(p##0) T1(p##1) T1(p##2) T1(p##3) T1(p##4) T1(p##5) T1(p##6) T1(p##7) \
    T1(p##8) T1(p##9) T1(p##a) T1(p##b) T1(p##c) T1(p##d) T1(p##e) T1(p##f)
#define T256(p) T16(p##0) T16(p##1) T16(p##2) T16(p##3) T16(p##4) T16(p##5) T16(p##6) T16(p##7) \
    T16(p##8) T16(p##9) T16(p##a) T16(p##b) T16(p##c) T16(p##d) T16(p##e) T16(p##f)
static unsigned (*const many_fns[])(unsigned) = {
    T256(0) T256(1) T256(2) T256(3) T256(4) T256(5) T256(6) T256(7)
    T256(8) T256(9) T256(a) T256(b) T256(c) T256(d) T256(e) T256(f)
};
#define MANY_FNS (sizeof many_fns / sizeof many_fns[0])

#endif
