/* launcher: a compiler launcher (ccache, distcc, or ccache over distcc) in front of every
 * compile of every stage. It never enters a stage key: the launcher is added to the ${cc}-style
 * variables and to each stage's CMake toolchain file (CMAKE_<LANG>_COMPILER_LAUNCHER), which
 * are not key inputs, so a result built with a launcher is the result built without one.
 *
 *   ccache          the user's own ccache: its cache directory and configuration (found by
 *                   asking `ccache` in crossroot's environment); CCACHE_* settings of the
 *                   caller pass through (remote_storage too), but base_dir is kept off (it
 *                   rewrites compile lines and so changes debug info)
 *   distcc          compiles go to the DISTCC_HOSTS of the caller (preprocessing stays local);
 *                   the job budget grows by distcc's slots unless --jobs was given. Hosts must
 *                   allow crossroot's compilers by absolute path (distccd's DISTCC_CMDLIST)
 *   ccache+distcc   ccache first, its misses through distcc (CCACHE_PREFIX)
 *
 * Build steps see the real environment of neither; what passes is listed in launcher_env(). */
#ifndef CROSSROOT_LAUNCHER_H
#define CROSSROOT_LAUNCHER_H

#include <stdbool.h>

#include "util.h"

struct launcher {
	char *spec;                 /* as given: "ccache", "distcc", "ccache+distcc" */
	char *command;              /* the program in front of each compiler: ccache or distcc */
	bool distcc;                /* compiles go to distcc hosts */
	bool network;               /* steps need the network: distcc, or ccache's remote storage */
	int remote_slots;           /* distcc's job slots (`distcc -j`), 0 without distcc */
	struct strlist env;         /* NAME=value for build steps */
};

/* Set up `spec` ("ccache", "distcc", "ccache+distcc"; NULL, "" or "none": no launcher, l->command
 * stays NULL). Finds the programs in PATH and asks them for their
 * settings. Returns -1 after error() for an unknown name or a missing program. */
int launcher_init(struct launcher *l, const char *spec);
void launcher_release(struct launcher *l);

/* Put the launcher in front of the compilers among a stage's variables (name, value pairs:
 * cc, cxx, host_gcc, host_gxx) and record it as ".launcher" for the CMake file. */
void launcher_apply(const struct launcher *l, struct strlist *vars);

#endif
