import Foundation
import Shelf
import ShelfTestSupport
import Testing

/// Scrobbling from `shelf serve` to a real scrobble server, Maloja from PyPI (in `.venv/maloja`,
/// made by `make test`), through its ListenBrainz- and Audioscrobbler-compatible APIs with an
/// outage and restarts; and to a loopback Last.fm stand-in that checks every signature by Last.fm's
/// documented algorithm (Maloja implements neither the web authentication flow nor signatures).
/// `scrobble_test.py` drives both; the Maloja half is skipped with the reason when Maloja is missing.
@Suite struct ScrobblingTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let maloja = repository.appendingPathComponent(".venv/maloja/bin/maloja")

    static var python: URL {
        let venv = repository.appendingPathComponent(".venv/bin/python")
        return FileManager.default.isExecutableFile(atPath: venv.path) ? venv : URL(fileURLWithPath: "/usr/bin/python3")
    }

    /// Ten 40-second tracks (long enough to be scrobbled), small at 8 kHz mono, with Japanese and Latin names.
    static func writeTracks(_ music: String) throws {
        let names = [("くるり", "ばらの花"), ("Zeta", "Opening"), ("宇多田ヒカル", "First Love"), ("Eta", "Second Song"), ("Theta", "Late Night")]
        for index in 0..<10 {
            let (artist, title) = names[index % names.count]
            let folder = URL(fileURLWithPath: music).appendingPathComponent(artist)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("\(index + 1).wav")
            try TestAudio.wav(seconds: 40, sampleRate: 8_000, channels: 1, frequency: 300 + Double(index) * 41).write(to: file)
            try TagFile.write(file, ["ARTIST": artist, "TITLE": index < 5 ? title : "\(title) (take \(index))", "ALBUM": "Album \(artist)"])
        }
    }

    /// Runs scrobble_test.py in `mode` over a served library of those tracks.
    static func run(_ mode: String, checks: [String]) throws {
        let fixture = try ServedLibrary(writing: writeTracks)
        defer { fixture.remove() }
        let script = repository.appendingPathComponent("Tests/scrobble_test.py")
        let result = try ChildProcess.run(python, [script.path, mode, ServedLibrary.shelfBinary().path, fixture.library, maloja.path])
        print(result.stdout)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr.suffix(3000))")
        for check in checks {
            #expect(result.stdout.contains("ok   \(mode): \(check)"), "\(check)")
        }
    }

    @Test func throughMalojaAcrossAnOutageAndRestarts() async throws {
        try await offCooperativePool {
            guard FileManager.default.isExecutableFile(atPath: Self.maloja.path) else {
                print("ScrobblingTests: Maloja is not installed in .venv/maloja (make test installs malojaserver from PyPI); skipped")
                return
            }
            try Self.run(
                "maloja",
                checks: [
                    "a ListenBrainz token is checked with the service before it is kept",
                    "50 plays through an outage and a restart arrive exactly once, in order, with their own times",
                    "shelf history lists the 50 listens",
                    "Audioscrobbler scrobbles, a refused session pauses the queue, relinking sends what was kept",
                ])
        }
    }

    @Test func lastfmSignaturesAndTheWebAuthenticationFlow() async throws {
        try await offCooperativePool {
            try Self.run(
                "lastfm",
                checks: [
                    "the web authentication flow links a user from the page",
                    "now playing and a scrobble, every call signed as Last.fm documents",
                    "auth.getMobileSession from the command line, the session key stored encrypted",
                ])
        }
    }
}
