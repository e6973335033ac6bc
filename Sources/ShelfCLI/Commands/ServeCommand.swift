import Dispatch
import Foundation
import Shelf
import ShelfCore
import ShelfServer

/// `shelf serve`: the library over HTTP (the native JSON API) until SIGINT or SIGTERM.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract = "Serve the library over HTTP (JSON API, artwork, streaming, live events) until SIGINT/SIGTERM; 127.0.0.1:4040 unless --listen says otherwise."
    static let synopsis = "[--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--max-transcodes N] [--music DIR]…"

    let address: String
    let port: UInt16
    let tls: (certificate: String, key: String)?
    let maxTranscodes: Int?
    /// The music folders a Subsonic startScan imports.
    let music: [URL]

    init(arguments: inout Arguments) throws {
        (address, port) = try Self.parseListen(try arguments.option("--listen") ?? "127.0.0.1:4040")
        let certificate = try arguments.option("--tls-cert")
        let key = try arguments.option("--tls-key")
        switch (certificate, key) {
        case (let certificate?, let key?): tls = (certificate, key)
        case (nil, nil): tls = nil
        default: throw UsageError("--tls-cert and --tls-key go together")
        }
        maxTranscodes = try arguments.intOption("--max-transcodes", in: 1...256)
        var music: [URL] = []
        while let folder = try arguments.firstOption("--music") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw UsageError("--music expects a directory, got '\(folder)'")
            }
            music.append(URL(fileURLWithPath: folder).standardizedFileURL)
        }
        self.music = music
        _ = try arguments.positionals().first.map { throw UsageError("serve takes no words, got '\($0)'") }
    }

    /// `HOST:PORT` with an IPv4 literal or a bracketed IPv6 one (`[::1]:4040`).
    static func parseListen(_ text: String) throws -> (String, UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw UsageError("--listen expects ADDR:PORT (127.0.0.1:4040, [::1]:4040, 0.0.0.0:4040), got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        guard inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 else {
            throw UsageError("--listen expects an IP address (127.0.0.1, ::1, 0.0.0.0), got '\(host)'")
        }
        return (host, port)
    }

    func configure(_ configuration: inout Library.Configuration) {
        // A server stays up: the mirror is built behind it, and reads use the direct path until then.
        configuration.buildsMirrorInBackground = true
    }

    func run(library: Library, output: Output) async throws {
        if try await library.users().isEmpty {
            throw CommandFailure(
                code: "noUsers",
                message: "no users yet; create the first (it becomes the library's owner and an admin) with: shelf --library \(library.directory.path) user add NAME --admin")
        }
        var options = ShelfServer.Options()
        options.address = address
        options.port = port
        if let maxTranscodes { options.maxTranscodes = maxTranscodes }
        options.musicRoots = music
        // A tuning knob (and how tests make a stuck reader overflow quickly).
        if let text = ProcessInfo.processInfo.environment["SHELF_EVENT_BUFFER_BYTES"], let bytes = Int(text), bytes > 0 {
            options.eventBufferBytes = bytes
        }
        if let text = ProcessInfo.processInfo.environment["SHELF_EVENT_STALL_MS"], let milliseconds = Int(text), milliseconds > 0 {
            options.eventStallLimit = .milliseconds(milliseconds)
        }
        if let tls {
            guard let certificate = FileManager.default.contents(atPath: tls.certificate) else { throw UsageError("--tls-cert: cannot read '\(tls.certificate)'") }
            guard let key = FileManager.default.contents(atPath: tls.key) else { throw UsageError("--tls-key: cannot read '\(tls.key)'") }
            options.tls = (certificate, key)
        }
        let server = try ShelfServer(library: library, options: options)
        let host = address.contains(":") ? "[\(address)]" : address
        Output.log("shelf: serving \(library.directory.path) on \(tls == nil ? "http" : "https")://\(host):\(server.port)")
        await Self.waitForSignal()
        Output.log("shelf: stopping")
        await server.stop(grace: .seconds(10))
        Output.log("shelf: stopped")
    }

    /// Returns at the first SIGINT or SIGTERM.
    static func waitForSignal() async {
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let fired = Locked(false)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for number in [SIGINT, SIGTERM] {
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    let first = fired.withLock { fired in
                        defer { fired = true }
                        return !fired
                    }
                    if first { continuation.resume() }
                }
                source.resume()
                Self.sources.withLock { $0.append(source) }
            }
        }
    }

    private static let sources = Locked<[any DispatchSourceSignal]>([])
}

// The help fields, apart from the parsing above so that edits to either do not collide.
extension ServeCommand {
    static let discussion = """
        Serves the library until SIGINT or SIGTERM: the JSON API under /api/ (the command line's documents), \
        artwork, streaming with ranges and ffmpeg transcodes, live change events, and the OpenSubsonic API \
        under /rest/ for existing music apps. The read mirror is built in the background. The library needs a \
        user first (`shelf user add NAME --admin`).
        """
    static let flags = [
        FlagHelp("--listen", "ADDR:PORT", "The address to listen on (an IPv4 literal, or IPv6 in brackets).", default: "127.0.0.1:4040"),
        FlagHelp("--tls-cert", "FILE", "Serve HTTPS with this PEM certificate (with --tls-key).", completes: .file),
        FlagHelp("--tls-key", "FILE", "The PEM private key of --tls-cert.", completes: .file),
        FlagHelp("--max-transcodes", "N", "The most ffmpeg transcodes at once (1 to 256).", default: "the number of cores"),
        FlagHelp(
            "--music", "DIR", "A music folder that a Subsonic startScan imports from (repeatable).", default: "none (startScan is refused)",
            completes: .directory, repeats: true),
    ]
    static let examples = ["shelf serve", "shelf serve --listen 0.0.0.0:4040", "shelf serve --listen '[::1]:8443' --tls-cert cert.pem --tls-key key.pem"]
}
