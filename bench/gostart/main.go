// Command gostart does nothing: the start and exit of a Go binary that
// links nothing, the least any of the step's commands can cost
// (bench/step-bench.sh's Go start floor).
package main

func main() {}
