import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import ShelfServer

/// A one-shot event that async code can await and blocking code can wait for with a timeout.
final class Flag: Sendable {
    private let group = DispatchGroup()
    private let fired = Locked(false)

    init() { group.enter() }

    func fire() {
        let first = fired.withLock { fired -> Bool in
            defer { fired = true }
            return !fired
        }
        if first { group.leave() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Blocks the calling thread (one of a test's own, off the cooperative pool) for at most `seconds`.
    func waitBlocking(seconds: Double) -> Bool { group.wait(timeout: .now() + seconds) == .success }

    /// Waits on a Dispatch thread (never a cooperative one) for at most `seconds`.
    func wait(seconds: Double) async -> Bool {
        await blocking { self.group.wait(timeout: .now() + seconds) == .success }
    }
}

/// Runs blocking work (curl, semaphores) off the cooperative pool, which also runs the handlers.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}

/// Collects access-log entries and lets a test wait until some have arrived.
final class AccessLog: Sendable {
    private let entries = Locked<[AccessLogEntry]>([])
    private let arrived = DispatchSemaphore(value: 0)

    func append(_ entry: AccessLogEntry) {
        entries.withLock { $0.append(entry) }
        arrived.signal()
    }

    var all: [AccessLogEntry] { entries.withLock { $0 } }

    /// Blocks (generously) until at least `count` entries were logged; for tests off the cooperative pool.
    func waitBlocking(count: Int) {
        while all.count < count {
            if arrived.wait(timeout: .now() + 30) == .timedOut { break }
        }
    }

    /// Waits (generously) until at least `count` entries were logged and returns them all.
    func wait(count: Int) async -> [AccessLogEntry] {
        await blocking {
            while self.all.count < count {
                if self.arrived.wait(timeout: .now() + 30) == .timedOut { break }
            }
            return self.all
        }
    }
}

func curl(_ arguments: [String]) async throws -> ProcessResult {
    try await blocking { try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments) }
}

/// A curl whose output is read as it comes, so a test can act once a given piece arrived.
final class StreamingCurl: @unchecked Sendable {
    // `@unchecked`: the process and pipe are used from one test at a time, in order.
    let process = Process()
    private let output = Pipe()
    private(set) var received = Data()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Reads until the output contains `text` or ends; whether it arrived.
    func read(until text: String) async -> Bool {
        await blocking {
            while !String(decoding: self.received, as: UTF8.self).contains(text) {
                let chunk = self.output.fileHandleForReading.availableData
                if chunk.isEmpty { return false }
                self.received += chunk
            }
            return true
        }
    }

    /// Reads to the end and waits for the exit.
    func finish() async -> String {
        await blocking {
            self.received += self.output.fileHandleForReading.readDataToEndOfFile()
            self.process.waitUntilExit()
            return String(decoding: self.received, as: UTF8.self)
        }
    }
}

@Suite(.serialized) struct HTTPServerTests {
    func makeServer(
        limits: HTTPLimits = HTTPLimits(), tls: (certificatePEM: Data, keyPEM: Data)? = nil,
        bodyLimit: @escaping @Sendable (String, String) -> Int? = { _, _ in nil }, log: AccessLog,
        handler: @escaping @Sendable (HTTPRequest) async -> HTTPResponse
    ) throws -> HTTPServer {
        try HTTPServer(address: "127.0.0.1", port: 0, limits: limits, tls: tls, bodyLimit: bodyLimit, log: log.append, handler: handler)
    }

    static func echo(_ request: HTTPRequest) -> HTTPResponse {
        let query = request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let text = "\(request.method) \(request.path) \(query) body=\(request.body.count) tls=\(request.isTLS) ua=\(request.headers["user-agent"] ?? "")"
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: .data(Data(text.utf8)))
    }

    @Test func getDecodesTheQueryAndKeepsTheConnectionAlive() async throws {
        let log = AccessLog()
        let server = try makeServer(log: log) { Self.echo($0) }
        defer { server.stop(grace: .seconds(5)) }
        #expect(server.port != 0)
        let base = "http://127.0.0.1:\(server.port)"
        let result = try await curl(["-sv", "\(base)/a%20b/%E5%AE%87?q=x+y&z=%26&flag", "\(base)/second"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("GET /a b/宇 q=x y&z=&&flag= body=0 tls=false ua=curl/"))
        #expect(result.stdout.contains("GET /second  body=0"))
        #expect(result.stderr.contains("Re-using existing connection"))
        let entries = await log.wait(count: 2)
        #expect(entries.map(\.status) == [200, 200])
        #expect(entries.first?.target == "/a%20b/%E5%AE%87?q=x+y&z=%26&flag")
        #expect(entries.first?.method == "GET")
        #expect(entries.first?.remoteAddress == "127.0.0.1")
        #expect(entries.allSatisfy { $0.bytes > 0 })
    }

    @Test func postBodiesArriveAndOversizedOnesAreRefused() async throws {
        let log = AccessLog()
        var limits = HTTPLimits()
        limits.bodyBytes = 1000
        let server = try makeServer(limits: limits, bodyLimit: { _, path in path == "/big" ? 10_000 : nil }, log: log) { request in
            HTTPResponse(body: .data(request.body))
        }
        defer { server.stop(grace: .seconds(5)) }
        let directory = try TemporaryDirectory()
        let payload = Data((0..<5000).map { UInt8($0 % 251) })
        try payload.write(to: directory.path("payload"))
        let base = "http://127.0.0.1:\(server.port)"

        let small = try await curl(["-s", "-w", "\n%{http_code}", "--data-binary", "hello body", "\(base)/echo"])
        #expect(split(small) == ("hello body", 200))

        let big = try await curl(["-s", "-w", "\n%{http_code}", "--data-binary", "@\(directory.path("payload").path)", "\(base)/echo"])
        #expect(split(big).status == 413)
        #expect(errorCode(split(big).body) == "payloadTooLarge")

        let output = directory.path("out")
        let routed = try await curl(["-s", "-o", output.path, "-w", "%{http_code}", "--data-binary", "@\(directory.path("payload").path)", "\(base)/big"])
        #expect(routed.stdout == "200")
        #expect(try Data(contentsOf: output) == payload)

        // Without a Content-Length the limit is found while reading: the connection is closed.
        let chunked = try await curl(
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(directory.path("payload").path)",
                "\(base)/echo",
            ])
        #expect(chunked.stdout != "200")
        let after = try await curl(["-s", "-w", "\n%{http_code}", "--data-binary", "again", "\(base)/echo"])
        #expect(split(after) == ("again", 200))

        let entries = await log.wait(count: 5)
        #expect(entries.map(\.status) == [200, 413, 200, 413, 200])
        #expect(entries.map(\.method) == ["POST", "POST", "POST", "POST", "POST"])
    }

    @Test func everyRequestContextIsFreed() async throws {
        let log = AccessLog()
        let server = try makeServer(log: log) { request in
            if request.path == "/stream" {
                let stream = ByteStream()
                Task {
                    _ = await stream.write(Data("s".utf8))
                    stream.finish()
                }
                return HTTPResponse(body: .stream(stream))
            }
            return Self.echo(request)
        }
        let base = "http://127.0.0.1:\(server.port)"
        _ = try await curl(["-s", "\(base)/a", "\(base)/stream", "\(base)/%zz"])
        _ = try await curl(["-s", "-I", "\(base)/head"])
        _ = try await curl(["-s", "\(base)/" + String(repeating: "y", count: 10_000)])
        _ = await log.wait(count: 5)
        server.stop(grace: .seconds(5))
        // Tasks that delivered a response may still be letting go of their reference.
        let freed = await blocking { () -> Bool in
            for _ in 0..<6000 where liveRequestContexts.withLock({ $0 }) != 0 { usleep(5000) }
            return liveRequestContexts.withLock { $0 } == 0
        }
        #expect(freed)
        #expect(log.all.count == 5)
    }

    @Test func longTargetsManyHeadersAndBadEscapesAreRejected() async throws {
        let log = AccessLog()
        var limits = HTTPLimits()
        limits.urlBytes = 200
        let server = try makeServer(limits: limits, log: log) { Self.echo($0) }
        defer { server.stop(grace: .seconds(5)) }
        let base = "http://127.0.0.1:\(server.port)"

        let long = try await curl(["-s", "-w", "\n%{http_code}", "\(base)/" + String(repeating: "x", count: 300)])
        #expect(split(long).status == 414)
        #expect(errorCode(split(long).body) == "uriTooLong")

        let headers = (0..<1000).flatMap { ["-H", "X-Filler-\($0): \(String(repeating: "v", count: 30))"] }
        let many = try await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}"] + headers + ["\(base)/many"])
        let manyStatus = Int(many.stdout) ?? 0
        #expect(manyStatus == 431 || manyStatus == 413)

        let bad = try await curl(["-s", "--path-as-is", "-w", "\n%{http_code}\n%{content_type}", "\(base)/a/%zz"])
        let lines = bad.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 3)
        #expect(lines.dropFirst().first == "400")
        #expect(lines.last == "application/json; charset=utf-8")
        #expect(errorCode(lines.first ?? "") == "badRequest")

        let after = try await curl(["-s", "-w", "\n%{http_code}", "\(base)/still"])
        #expect(split(after).status == 200)

        let entries = await log.wait(count: 4)
        #expect(entries.map(\.status) == [414, manyStatus, 400, 200])
    }

    @Test func fileBodiesSendTheExactRangeAndHeadSendsOnlyTheLength() async throws {
        let log = AccessLog()
        let directory = try TemporaryDirectory()
        let file = directory.path("data.bin")
        let content = Data((0..<100_000).map { UInt8(($0 * 7) % 256) })
        try content.write(to: file)
        let path = file.path
        let server = try makeServer(log: log) { _ in
            let descriptor = open(path, O_RDONLY)
            return HTTPResponse(
                headers: [("Content-Type", "application/octet-stream")], body: .file(descriptor: descriptor, offset: 1000, length: 5000))
        }
        defer { server.stop(grace: .seconds(5)) }
        let output = directory.path("out.bin")
        let get = try await curl(["-s", "-o", output.path, "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/file"])
        #expect(get.stdout == "200")
        #expect(try Data(contentsOf: output) == content[1000..<6000])

        let head = try await curl(["-s", "-I", "http://127.0.0.1:\(server.port)/file"])
        #expect(head.stdout.lowercased().contains("content-length: 5000"))

        let entries = await log.wait(count: 2)
        #expect(entries.map(\.status) == [200, 200])
        #expect(entries.map(\.bytes) == [5000, 0])
        #expect(entries.map(\.method) == ["GET", "HEAD"])
    }

    @Test func streamsSendChunksAsTheProducerWritesThem() async throws {
        let log = AccessLog()
        let second = Flag()
        let server = try makeServer(log: log) { _ in
            let stream = ByteStream()
            Task {
                _ = await stream.write(Data("first\n".utf8))
                await second.wait()
                _ = await stream.write(Data("second\n".utf8))
                stream.finish()
            }
            return HTTPResponse(headers: [("Content-Type", "text/plain")], body: .stream(stream))
        }
        defer { server.stop(grace: .seconds(5)) }
        let client = try StreamingCurl(["-sN", "http://127.0.0.1:\(server.port)/stream"])
        #expect(await client.read(until: "first\n"))
        second.fire()
        #expect(await client.finish() == "first\nsecond\n")
        #expect(client.process.terminationStatus == 0)
        let entries = await log.wait(count: 1)
        #expect(entries.first?.status == 200)
        #expect(entries.first?.bytes == 13)
    }

    @Test func aClientLeavingMidStreamCancelsTheStream() async throws {
        let log = AccessLog()
        let killed = Flag()
        let cancelled = Flag()
        let server = try makeServer(log: log) { _ in
            let stream = ByteStream(capacity: 16 * 1024)
            stream.onCancel { cancelled.fire() }
            Task {
                _ = await stream.write(Data("first\n".utf8))
                await killed.wait()
                // Parked connections learn the client is gone when there is something to send.
                while await stream.write(Data(repeating: UInt8(ascii: "x"), count: 8 * 1024)) {}
            }
            return HTTPResponse(body: .stream(stream))
        }
        defer { server.stop(grace: .seconds(5)) }
        let client = try StreamingCurl(["-sN", "http://127.0.0.1:\(server.port)/stream"])
        #expect(await client.read(until: "first\n"))
        kill(client.process.processIdentifier, SIGKILL)
        _ = await client.finish()
        killed.fire()
        #expect(await cancelled.wait(seconds: 60))
        let entries = await log.wait(count: 1)
        #expect(entries.first?.status == 200)
    }

    @Test func idleStreamsHoldNoThread() async throws {
        let log = AccessLog()
        var limits = HTTPLimits()
        limits.threads = 2
        let opened = Locked(0)
        let allOpen = Flag()
        let streams = Locked<[ByteStream]>([])
        let count = 12
        let server = try makeServer(limits: limits, log: log) { request in
            guard request.path == "/idle" else { return HTTPResponse(body: .data(Data("pong".utf8))) }
            let stream = ByteStream()
            streams.withLock { $0.append(stream) }
            _ = await stream.write(Data("open\n".utf8))
            if opened.withLock({
                $0 += 1
                return $0
            }) == count {
                allOpen.fire()
            }
            return HTTPResponse(body: .stream(stream))
        }
        defer { server.stop(grace: .seconds(5)) }
        let clients = try (0..<count).map { _ in try StreamingCurl(["-sN", "http://127.0.0.1:\(server.port)/idle"]) }
        for client in clients { #expect(await client.read(until: "open\n")) }
        #expect(await allOpen.wait(seconds: 60))
        let ping = try await curl(["-s", "http://127.0.0.1:\(server.port)/ping"])
        #expect(ping.stdout == "pong")
        for stream in streams.withLock({ $0 }) { stream.finish() }
        for client in clients { #expect(await client.finish() == "open\n") }
        let entries = await log.wait(count: count + 1)
        #expect(entries.count == count + 1)
        #expect(entries.allSatisfy { $0.status == 200 })
    }

    /// At the per-address limit the address's longest-idle connection is closed to admit a new
    /// one (a client leaking keep-alive connections is not locked out); with all of them busy,
    /// the new one is refused.
    @Test func atTheAddressLimitTheOldestIdleConnectionMakesRoom() async throws {
        let log = AccessLog()
        var limits = HTTPLimits()
        limits.connectionsPerAddress = 4
        let held = Locked(0)
        let allHeld = Flag()
        let release = Flag()
        let server = try makeServer(limits: limits, log: log) { request in
            if request.path == "/hold" {
                if held.withLock({
                    $0 += 1
                    return $0
                }) == 4 {
                    allHeld.fire()
                }
                await release.wait()
            }
            return HTTPResponse(body: .data(Data("pong".utf8)))
        }
        defer { server.stop(grace: .seconds(5)) }
        let port = UInt16(server.port)
        let get = "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"
        @Sendable func answered(_ connection: RawConnection) -> Bool {
            String(decoding: connection.read { String(decoding: $0, as: UTF8.self).hasSuffix("pong") }, as: UTF8.self).hasSuffix("pong")
        }
        try await offCooperativePool {
            // Four keep-alive connections, each answered once and left idle (idle once logged).
            let idle = try (0..<4).map { _ in try RawConnection(port: port) }
            for connection in idle {
                try connection.send(get)
                #expect(answered(connection))
            }
            log.waitBlocking(count: 4)
            // A fifth is served: the first, idle the longest, was closed for it; the second is open.
            let fifth = try RawConnection(port: port)
            try fifth.send(get)
            #expect(answered(fifth))
            #expect(idle[0].read().isEmpty, "the oldest idle connection is closed")
            try idle[1].send(get)
            #expect(answered(idle[1]), "a younger idle connection still serves")
            log.waitBlocking(count: 6)
            // Four requests in flight: nothing is idle, so a new connection is refused.
            let busy = [idle[1], idle[2], idle[3], fifth]
            for connection in busy { try connection.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n") }
            #expect(allHeld.waitBlocking(seconds: 60))
            let refused = try RawConnection(port: port)
            try? refused.send(get)
            #expect(refused.read().isEmpty, "refused while every connection is busy")
            release.fire()
            for connection in busy { #expect(answered(connection)) }
        }
    }

    @Test func stopLetsTheRequestInFlightFinishAndThenRefusesConnections() async throws {
        let log = AccessLog()
        let entered = Flag()
        let release = Flag()
        let server = try makeServer(log: log) { _ in
            entered.fire()
            await release.wait()
            return HTTPResponse(body: .data(Data("finished".utf8)))
        }
        let port = server.port
        async let inFlight = curl(["-s", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)/slow"])
        #expect(await entered.wait(seconds: 60))
        await blocking { server.stop(grace: .seconds(60), afterQuiesce: { release.fire() }) }
        let result = try await inFlight
        #expect(split(result) == ("finished", 200))
        let refused = try await curl(["-s", "http://127.0.0.1:\(port)/after"])
        #expect(refused.status == 7)  // curl: could not connect
        server.stop(grace: .seconds(1))  // idempotent
        let entries = await log.wait(count: 1)
        #expect(entries.map(\.status) == [200])
    }

    @Test func stopAfterTheGraceDropsALateAnswerAndStopsItsProducer() async throws {
        let log = AccessLog()
        let entered = Flag()
        let release = Flag()
        let cancelled = Flag()
        let server = try makeServer(log: log) { _ in
            entered.fire()
            await release.wait()
            let stream = ByteStream()
            stream.onCancel { cancelled.fire() }
            return HTTPResponse(body: .stream(stream))
        }
        let port = server.port
        async let inFlight = curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/late"])
        #expect(await entered.wait(seconds: 60))
        await blocking { server.stop(grace: .zero) }
        let result = try await inFlight
        // Either the 503 went out before the daemon closed the connection, or nothing did.
        #expect(result.stdout == "503" || result.stdout == "000")
        release.fire()
        #expect(await cancelled.wait(seconds: 60))
        let entries = await log.wait(count: 1)
        #expect(entries.count == 1)
    }

    @Test func stopCancelsOpenStreams() async throws {
        let log = AccessLog()
        let cancelled = Flag()
        let server = try makeServer(log: log) { _ in
            let stream = ByteStream()
            stream.onCancel { cancelled.fire() }
            _ = await stream.write(Data("open\n".utf8))
            return HTTPResponse(body: .stream(stream))
        }
        let client = try StreamingCurl(["-sN", "http://127.0.0.1:\(server.port)/events"])
        #expect(await client.read(until: "open\n"))
        await blocking { server.stop(grace: .seconds(5)) }
        #expect(await cancelled.wait(seconds: 60))
        _ = await client.finish()
        let entries = await log.wait(count: 1)
        #expect(entries.count == 1)
    }

    @Test func bindsExactlyAnIPv6Address() async throws {
        let log = AccessLog()
        let server: HTTPServer
        do {
            server = try HTTPServer(address: "::1", port: 0, log: log.append) { request in
                HTTPResponse(body: .data(Data(("v6-only " + request.remoteAddress).utf8)))
            }
        } catch {
            return  // no IPv6 loopback on this machine
        }
        defer { server.stop(grace: .seconds(5)) }
        let six = try await curl(["-sg", "http://[::1]:\(server.port)/"])
        #expect(six.stdout == "v6-only ::1")
        // Bound to ::1 only: 127.0.0.1 on that port is refused, or (another test's server may hold
        // the same number on IPv4) answered by someone else, never by this server.
        let four = try await curl(["-s", "http://127.0.0.1:\(server.port)/"])
        #expect(four.status == 7 || !four.stdout.hasPrefix("v6-only"), "\(four.status) \(four.stdout)")
    }

    @Test func addressInUseIsATypedError() throws {
        let log = AccessLog()
        let server = try makeServer(log: log) { Self.echo($0) }
        defer { server.stop(grace: .seconds(1)) }
        #expect {
            _ = try HTTPServer(address: "127.0.0.1", port: server.port, log: log.append) { Self.echo($0) }
        } throws: { error in
            guard let error = error as? HTTPServerError else { return false }
            return error.address == "127.0.0.1" && error.port == server.port && error.description.contains("in use")
        }
        #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer(address: "localhost", port: 0, log: log.append) { Self.echo($0) }
        }
    }

    @Test(.enabled(if: HTTPServer.tlsSupported)) func tlsServesWithASelfSignedCertificate() async throws {
        let directory = try TemporaryDirectory()
        let key = directory.path("key.pem")
        let certificate = directory.path("cert.pem")
        let made = try await blocking {
            try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/openssl"),
                ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key.path, "-out", certificate.path, "-days", "1", "-subj", "/CN=localhost"])
        }
        #expect(made.status == 0)
        let log = AccessLog()
        let server = try makeServer(tls: (try Data(contentsOf: certificate), try Data(contentsOf: key)), log: log) { Self.echo($0) }
        defer { server.stop(grace: .seconds(5)) }
        #expect(server.isTLS)
        let result = try await curl(["-sk", "https://127.0.0.1:\(server.port)/secure?x=1"])
        #expect(result.stdout.contains("GET /secure x=1 body=0 tls=true"))
        let entries = await log.wait(count: 1)
        #expect(entries.first?.status == 200)
    }
}
