#include "ticks.h"

#include <stdio.h>
#include <string.h>

int eb_ticks_tsc;

const char *eb_ticks_init(void)
{
#if defined(__x86_64__)
	static int decided;
	char src[32] = "";
	FILE *f;

	if (!decided) {
		decided = 1;
		/* The kernel picks the TSC as clocksource only after checking it is stable. */
		f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
		if (f != NULL) {
			if (fgets(src, sizeof(src), f) != NULL)
				eb_ticks_tsc =
				    strncmp(src, "tsc", 3) == 0 && (src[3] == '\n' || !src[3]);
			fclose(f);
		}
	}
#endif
	return eb_ticks_tsc ? "tsc" : "clock_gettime";
}
