/* SPDX-License-Identifier: MIT */
/* svg.c - the flame graph writer (lands with issue #15's next step). */
#include "profile/profile_impl.h"

int prof_write_svg(const rtd_profile *p, FILE *f, size_t type,
		   const struct rtd_profile_write_opts *o)
{
	(void)p, (void)f, (void)type, (void)o;
	return -RTD_E_UNSUPPORTED;
}
