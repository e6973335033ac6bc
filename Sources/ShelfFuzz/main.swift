import CFuzzDriver
import Foundation

// `shelf-fuzz TARGET [libFuzzer flags] [CORPUS…]`. Built with `-sanitize=fuzzer,address` (make
// fuzz), libFuzzer's own `main` runs and `LLVMFuzzerInitialize` (Fuzzing.swift) picks the target;
// this file's code runs only in an ordinary build, which replays the files given (the committed
// seeds and every finding), as the test suite does.

let arguments = CommandLine.arguments
if arguments.count == 2 && arguments[1] == "--list" {
    print(targets.keys.sorted().joined(separator: "\n"))
    exit(0)
}
guard arguments.count >= 2, let target = targets[arguments[1]] else {
    FileHandle.standardError.write(
        Data("usage: shelf-fuzz TARGET [libFuzzer flags] [CORPUS…]\ntargets: \(targets.keys.sorted().joined(separator: " "))\n".utf8))
    exit(2)
}
current = target
chosen = true
var cStrings = ([arguments[0]] + arguments.dropFirst(2)).map { strdup($0) }
let status = shelf_fuzz_run(Int32(cStrings.count), &cStrings) { data, size in
    fuzzOne(data, size)
}
removeScratch()
exit(status)
