/* SPDX-License-Identifier: MIT */
/*
 * slubrun_check.h - say before exec when a program will not load the
 * preloaded library (static, set-ID or capabilities), and why.
 */
#ifndef SLUBRUN_CHECK_H
#define SLUBRUN_CHECK_H

/* One line on stderr if @prog (found as execvp() would) cannot load @lib_name. */
void slubrun_check_program(const char *prog, const char *lib_name);

#endif
