/* Unit tests of guest: the console's frame reader, fed lines as a boot would, without qemu.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include "guest.h"

#define KEY "0123456789abcdef0123456789abcdef"

static void feed(struct guest_frames *f, const char *line)
{
	char *copy = xstrdup(line);
	guest_frames_line(f, copy);
	free(copy);
}

static void release(struct guest_frames *f)
{
	for (size_t i = 0; i < f->n; i++)
		guest_result_release(&f->results[i]);
	free(f->failure);
	buf_release(&f->noise);
}

/* A whole list: the kernel's lines between frames are noise, output is hex, statuses and
 * timeouts land in their programs, and frames after done change nothing. */
TEST(guest_frames)
{
	struct guest_result r[2] = {0};
	struct guest_frames f = {.results = r, .n = 2, .key = KEY};
	feed(&f, "[    0.000000] Booting Linux on physical CPU 0x0\r");
	feed(&f, "@crossroot " KEY " 0 boot 0 6.1.0-50-arm64\r");
	feed(&f, "@crossroot " KEY " 1 out 0 68690a");   /* "hi\n" */
	feed(&f, "@crossroot " KEY " 2 err 0 21");
	feed(&f, "[   12.5] a kernel message between frames");
	/* what a program could print, were it on the console: another key is noise */
	feed(&f, "@crossroot 00000000000000000000000000000000 3 exit 0 0");
	feed(&f, "@crossroot " KEY " 3 exit 0 768");
	feed(&f, "@crossroot " KEY " 4 timeout 1 120");
	feed(&f, "@crossroot " KEY " 5 done 2 2");
	feed(&f, "@crossroot " KEY " 6 exit 1 0");
	CHECK(f.booted && f.done && !f.failure);
	CHECK(r[0].ran && !r[0].timed_out && r[0].status == 768);
	CHECK(r[0].out.s && strcmp(r[0].out.s, "hi\n") == 0 && r[0].err.s && strcmp(r[0].err.s, "!") == 0);
	CHECK(r[1].ran && r[1].timed_out && !r[1].out.s);
	CHECK(f.noise.s && strstr(f.noise.s, "Booting Linux") &&
	      strstr(f.noise.s, "(not a frame of this boot) @crossroot 0000"));
	release(&f);
}

/* What fails a boot: a lost frame, bad hex, a program not in the list, init's own error, an
 * unknown kind; after a failure nothing more is taken. */
TEST(guest_frames_broken)
{
	static const char *const cases[][2] = {
		{"@crossroot " KEY " 1 out 0 68", "the console lost frame 0 (broken by another line)"},
		{"@crossroot " KEY " 3 out 0 68", "the console lost frames 0 to 2 (broken by other lines)"},
		{"@crossroot " KEY " 0 out 0 6x", "a malformed out frame of program 0"},
		{"@crossroot " KEY " 0 out 0 686", "a malformed out frame of program 0"},
		{"@crossroot " KEY " 0 exit 5 0", "a frame names program 5 of 1"},
		{"@crossroot " KEY " 0 error -1 6e6f206b6579", "the guest's init failed: no key"},
		{"@crossroot " KEY " 0 reboot 0 -", "an unknown frame kind 'reboot'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct guest_result r[1] = {0};
		struct guest_frames f = {.results = r, .n = 1, .key = KEY};
		feed(&f, cases[i][0]);
		CHECK(f.failure && strcmp(f.failure, cases[i][1]) == 0);
		if (f.failure && strcmp(f.failure, cases[i][1]) != 0)
			fprintf(stderr, "    got '%s'\n", f.failure);
		feed(&f, "@crossroot " KEY " 1 exit 0 0");
		CHECK(!r[0].ran);
		release(&f);
	}
	/* a program that could not start says why, and has no status */
	struct guest_result r[1] = {0};
	struct guest_frames f = {.results = r, .n = 1, .key = KEY};
	feed(&f, "@crossroot " KEY " 0 error 0 6e6f");
	CHECK(!f.failure && r[0].error && strcmp(r[0].error, "no") == 0 && !r[0].ran);
	/* a frame seen again (replayed) fails too */
	feed(&f, "@crossroot " KEY " 0 exit 0 0");
	CHECK(f.failure && strcmp(f.failure, "frame 0 came again after frame 0") == 0);
	release(&f);
}
