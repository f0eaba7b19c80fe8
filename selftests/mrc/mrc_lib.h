/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the C selftests. */
#ifndef MRC_SELFTEST_LIB_H
#define MRC_SELFTEST_LIB_H

#include <stdio.h>
#include <linux/mrc.h>

/* The family number the loaded module registered (module parameter). */
static inline int mrc_family(void)
{
	FILE *f = fopen("/sys/module/mrc/parameters/family", "r");
	int fam = AF_MRC;

	if (f) {
		if (fscanf(f, "%d", &fam) != 1)
			fam = AF_MRC;
		fclose(f);
	}
	return fam;
}

#endif
