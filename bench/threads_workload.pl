# SPDX-License-Identifier: MIT
# threads_workload.pl - Perl with interpreter threads (run_programs.sh's
# perl-threads): a producer queues arrays of strings, two workers build a
# hash of each.  Every value crosses threads (Thread::Queue copies it into
# the shared interpreter and out again), so objects are allocated by one
# thread and freed by another, as in the threaded interpreters of issue 40.
use strict;
use warnings;
use threads;
use Thread::Queue;

my $q = Thread::Queue->new();
# Bounded, as the Python one: else how far the producer runs ahead (the
# scheduler's choice) decides the peak RSS, 10 to 90 MiB here.
$q->limit = 1000;
my @workers = map {
	threads->create(sub {
		my $n = 0;
		while (defined(my $item = $q->dequeue())) {
			my %h = map { $_ => "v$_" x 3 } @$item;
			$n += scalar keys %h;
		}
		return $n;
	})
} 1 .. 2;
$q->enqueue([map { "k$_-$_" } 1 .. 20]) for 1 .. 40000;
$q->end();
my $total = 0;
$total += $_->join() for @workers;
print "$total\n";
