import Foundation

/// The target this process runs (a C callback cannot capture it).
nonisolated(unsafe) var current: @Sendable (Data) -> Void = { _ in }
/// Whether main.swift chose it already (then libFuzzer's arguments no longer name it).
nonisolated(unsafe) var chosen = false

/// One input through the current target.
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    current(size == 0 || data == nil ? Data() : Data(bytes: data!, count: size))
    return 0
}

/// The scratch files the path-reading targets wrote.
func removeScratch() {
    try? FileManager.default.removeItem(at: scratch.appendingPathExtension("m3u"))
    try? FileManager.default.removeItem(at: scratch.appendingPathExtension("bin"))
}

/// libFuzzer's entry for each input (its own `main` calls it in a `make fuzz` build).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzOne(data, size) }

/// libFuzzer calls this first with its arguments. When its own `main` runs (main.swift's did not),
/// the first is the target's name (or `--list`), taken out before libFuzzer reads the rest as its
/// flags and corpora.
@_cdecl("LLVMFuzzerInitialize")
public func llvmFuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>)
    -> Int32
{
    if chosen { return 0 }
    guard argc.pointee >= 2, let list = argv.pointee, let first = list[1] else {
        FileHandle.standardError.write(Data("usage: shelf-fuzz TARGET [libFuzzer flags] [CORPUS…]\n".utf8))
        exit(2)
    }
    let name = String(cString: first)
    if name == "--list" {
        print(targets.keys.sorted().joined(separator: "\n"))
        exit(0)
    }
    guard let target = targets[name] else {
        FileHandle.standardError.write(Data("shelf-fuzz: no target \(name); targets: \(targets.keys.sorted().joined(separator: " "))\n".utf8))
        exit(2)
    }
    current = target
    // argv[1] goes: the rest move down one place.
    for index in 1..<Int(argc.pointee) { list[index] = list[index + 1] }
    argc.pointee -= 1
    return 0
}
