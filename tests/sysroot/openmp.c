// flags: -fopenmp
// requires: libomp
/* openmp: -fopenmp with no other flag: omp.h and libomp from the sysroot; a parallel loop
 * with a reduction, on four threads, gives the serial sum. */
#include <omp.h>
#include <stdio.h>

int main(void)
{
	long sum = 0;
	int threads = 0;
	omp_set_num_threads(4);
#pragma omp parallel for reduction(+ : sum)
	for (int i = 1; i <= 100000; i++)
		sum += i;
#pragma omp parallel
	{
#pragma omp single
		threads = omp_get_num_threads();
	}
	printf("sum %ld, threads %d\n", sum, threads);
	return 0;
}
