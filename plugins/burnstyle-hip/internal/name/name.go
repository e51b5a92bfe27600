// Package name is the backend's name: the one definition the root package
// and its kernel workloads (package kernels) share.
package name

// Backend is the backend's name in results and on the command line.
const Backend = "burnstyle-hip"
