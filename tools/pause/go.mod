// The pod sandbox's pause process, our own (upstream's is a small C program with the same behaviour).
module quorum.dev/tools/pause

go 1.24.0
