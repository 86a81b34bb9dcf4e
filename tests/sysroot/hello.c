/* hello: the smallest program: stdio, argv and the exit status from main. */
#include <stdio.h>

int main(int argc, char **argv)
{
	printf("hello\n");
	printf("argc=%d argv[0] %s\n", argc, argv[0] && argv[0][0] ? "set" : "missing");
	return 0;
}
