import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// The one way Shelf runs another program: found on PATH once with an error naming the Debian
/// package, a time limit, cancellation, and bounded capture of both outputs.
@Suite struct ProgramRunnerTests {
    @Test func aMissingToolNamesItsPackage() {
        let tool = ExternalTool(name: "shelf-no-such-tool", debianPackage: "shelf-no-such-package")
        #expect(throws: ToolError(tool: "shelf-no-such-tool", reason: .notInstalled(searched: "/nonexistent", package: "shelf-no-such-package"))) {
            try ProgramRunner.locate(tool, searchPath: "/nonexistent")
        }
        do {
            _ = try ProgramRunner.locate(.mpv, path: "/nonexistent/mpv")
            Issue.record("a missing path was found")
        } catch {
            #expect(error.description.contains("apt-get install mpv"), "\(error)")
            #expect(error.kind == .unavailable && error.errorCode == "toolMissing")
        }
        #expect((try? ProgramRunner.locate(ExternalTool(name: "sh", debianPackage: "dash"))) != nil)
    }

    @Test func capturesBothOutputsAndTheStatus() async throws {
        try await offCooperativePool {
            let finished = try ProgramRunner.run("/bin/sh", ["-c", "printf out; printf 'first\\nwhy it failed\\n' >&2; exit 3"])
            #expect(String(decoding: finished.output, as: UTF8.self) == "out")
            #expect(finished.status == 3 && !finished.signalled && !finished.succeeded)
            #expect(finished.lastErrorLine == "why it failed")
            #expect(finished.ending == "exit status 3")
        }
    }

    /// A chatty program cannot make Shelf hold unbounded output, and is still drained to its end
    /// (it would block on a full pipe otherwise).
    @Test func captureIsBounded() async throws {
        try await offCooperativePool {
            let finished = try ProgramRunner.run(
                "/bin/sh", ["-c", "head -c 1000000 /dev/zero; yes noise | head -c 300000 >&2; echo last >&2"], outputLimit: 1000, errorLimit: 100)
            #expect(finished.output.count == 1000)
            #expect(finished.errorOutput.count == 100)
            #expect(finished.lastErrorLine == "last")
            #expect(finished.succeeded)
        }
    }

    /// A program still running at its time limit is killed and reaped; the error says so.
    @Test func aHungProgramIsKilledAtItsLimit() async throws {
        try await offCooperativePool {
            let pidFile = try TemporaryFile()
            do {
                _ = try ProgramRunner.run("/bin/sh", ["-c", "echo $$ > \(pidFile.path); exec sleep 600"], timeout: 0.5)
                Issue.record("a hung program returned")
            } catch let error as ToolError {
                #expect(error.reason == .timedOut(seconds: 0.5))
                #expect(error.kind == .internal)
            }
            let pid = try #require(Int32(String(contentsOfFile: pidFile.path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(kill(pid, 0) != 0, "the program was reaped")
        }
    }

    /// Cancelling the task that waits kills the program.
    @Test func cancellingTheTaskKillsTheProgram() async throws {
        let pidFile = try TemporaryFile()
        let task = Task { try await ProgramRunner.run("/bin/sh", ["-c", "echo $$ > \(pidFile.path); exec sleep 600"]) }
        // Cancel once the program is known to run: it has written its PID.
        while (try? String(contentsOfFile: pidFile.path, encoding: .utf8))?.hasSuffix("\n") != true { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let pid = try #require(Int32(String(contentsOfFile: pidFile.path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(pid, 0) != 0, "the program was killed and reaped")
    }

    /// The streaming form: the caller reads the pipe, and `finish` reaps the program.
    @Test func streamingForm() async throws {
        try await offCooperativePool {
            let program = try ProgramRunner.start("/bin/sh", ["-c", "echo streamed"], output: .pipe)
            let handle = FileHandle(fileDescriptor: try #require(program.outputDescriptor), closeOnDealloc: false)
            #expect(String(decoding: handle.readDataToEndOfFile(), as: UTF8.self) == "streamed\n")
            let (status, signalled) = program.wait()
            #expect(status == 0 && !signalled)
            program.finish()
            #expect(!program.isRunning)
        }
    }
}

/// A file name in a fresh temporary directory, the file not yet made.
private struct TemporaryFile {
    let directory: URL
    var path: String { directory.appendingPathComponent("file").path }
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-runner-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
}
