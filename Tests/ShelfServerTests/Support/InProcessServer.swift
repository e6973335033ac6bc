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
    let fixture: TemporaryLibrary
    var library: Library { fixture.library }
    let server: ShelfServer
    static let annPassword = "ann's secret"
    static let bobPassword = "bob-pass"

    /// A library of `tracks` generated tracks (`DatasetGenerator`, deterministic), with `ann`
    /// (an admin) and `bob`, served on a loopback port nobody calls.
    init(tracks: Int = 60, seed: UInt64 = 7, configure: (inout ShelfServer.Options) -> Void = { _ in }) async throws {
        fixture = try await TemporaryLibrary.seeded(tracks: tracks, seed: seed)
        let library = fixture.library
        _ = try await library.addUser(name: "ann", password: Self.annPassword, admin: true)
        _ = try await library.addUser(name: "bob", password: Self.bobPassword)
        var options = ShelfServer.Options()
        options.port = 0
        options.watch = false
        options.log = { _ in }
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
