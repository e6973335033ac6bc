import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

@testable import ShelfServer

/// A library served in-process, for handler-level tests: requests go straight through the router
/// and the Subsonic API (`ShelfServer.respond`), with no client socket and no child process, so a
/// suite can share one fixture and each test checks one behaviour. Real processes stay for what
/// only they show: signals, power cuts, the real clients, the browser, the package.
final class InProcessServer: Sendable {
    /// The temporary library, when this server made it.
    let fixture: TemporaryLibrary?
    let library: Library
    let server: ShelfServer
    /// What the server logged (its own lines, not request lines: no request crosses a socket).
    let log = Locked<[String]>([])
    static let annPassword = "ann's secret"
    static let bobPassword = "bob-pass"

    /// A library of `tracks` generated tracks (`DatasetGenerator`, deterministic), with `ann`
    /// (an admin) and `bob`, served on a loopback port nobody calls.
    convenience init(tracks: Int = 60, seed: UInt64 = 7, configure: (inout ShelfServer.Options) -> Void = { _ in }) async throws {
        let fixture = try await TemporaryLibrary.seeded(tracks: tracks, seed: seed)
        _ = try await fixture.library.addUser(name: "ann", password: Self.annPassword, admin: true)
        _ = try await fixture.library.addUser(name: "bob", password: Self.bobPassword)
        try self.init(library: fixture.library, fixture: fixture, configure: configure)
    }

    /// The library in `directory` (one `ServedLibrary` made of real files, say), served in-process.
    convenience init(directory: String, configure: (inout ShelfServer.Options) -> Void = { _ in }) throws {
        try self.init(library: Library(directory: URL(fileURLWithPath: directory)), fixture: nil, configure: configure)
    }

    private init(library: Library, fixture: TemporaryLibrary?, configure: (inout ShelfServer.Options) -> Void) throws {
        self.fixture = fixture
        self.library = library
        var options = ShelfServer.Options()
        options.port = 0
        options.watch = false
        let log = log
        options.log = { line in log.withLock { $0.append(line) } }
        options.accessLog = { _ in }
        configure(&options)
        server = try ShelfServer(library: library, options: options)
    }

    deinit {
        let server = server
        Task { await server.stop(grace: .seconds(1)) }
    }

    /// The answer to `method path?query`, as the network would carry it.
    func request(
        _ method: String = "GET", _ path: String, query: [(String, String)] = [], headers: [String: String] = [:], body: Data = Data()
    ) async -> Answer {
        let response = await server.respond(
            HTTPRequest(method: method, path: path, query: query.map { (name: $0.0, value: $0.1) }, headers: headers, body: body))
        return Answer(status: response.status, headers: response.headers, body: await Self.bytes(of: response.body))
    }

    /// `request`'s answer for code that cannot await (a test body on a thread of its own): the
    /// thread waits while the handler runs on the cooperative pool.
    func blocking(_ method: String, _ path: String, query: [(String, String)], headers: [String: String] = [:]) -> Answer {
        let answer = Locked<Answer?>(nil)
        let done = DispatchSemaphore(value: 0)
        let pairs = query.map { ($0.0, $0.1) }
        Task {
            let value = await self.request(method, path, query: pairs, headers: headers)
            answer.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0! }
    }

    /// A Subsonic call as `user` (password authentication), in `format` ("json" or "xml").
    func subsonic(_ endpoint: String, _ parameters: [(String, String)] = [], user: String = "ann", format: String = "json") async -> Answer {
        let password = user == "ann" ? Self.annPassword : Self.bobPassword
        return await request(
            "GET", "/rest/\(endpoint)", query: [("u", user), ("p", password), ("v", "1.16.1"), ("c", "tests"), ("f", format)] + parameters)
    }

    /// A Subsonic JSON call's `subsonic-response` object.
    func subsonicJSON(_ endpoint: String, _ parameters: [(String, String)] = [], user: String = "ann") async throws -> [String: Any] {
        let answer = await subsonic(endpoint, parameters, user: user)
        let object = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
        return try #require(object["subsonic-response"] as? [String: Any], "\(answer.text)")
    }

    /// What a response body holds, read to its end.
    static func bytes(of body: HTTPBody) async -> Data {
        switch body {
        case .data(let data): return data
        case .file(let descriptor, let offset, let length):
            defer { close(descriptor) }
            var data = Data(count: Int(length))
            let read = data.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, Int(length), off_t(offset)) }
            return data.prefix(max(0, read))
        case .stream(let stream):
            var data = Data()
            while true {
                switch stream.read(max: 64 * 1024, wakeup: {}) {
                case .data(let piece): data += piece
                case .end, .aborted: return data
                case .pending: await Task.yield()
                }
            }
        }
    }

    /// A response as a client sees it.
    struct Answer: Sendable {
        let status: Int
        let headers: [(String, String)]
        let body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        /// The body as a JSON object.
        func json() throws -> [String: Any] { try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any], "\(text)") }
    }
}
