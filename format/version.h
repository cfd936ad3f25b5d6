/* version.h: the one version string every tool prints for --version. It must never hold
 * anything but the version. */
#ifndef PERFSCOPE_VERSION_H
#define PERFSCOPE_VERSION_H

#define PERFSCOPE_VERSION "0.10.0"

#endif
