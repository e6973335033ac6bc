import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

/// The stream role plays; only the download role hands out original files, on `/rest/` and
/// `/api/` alike (`/api/stream` without a format sent the original to a stream-only user).
@Suite struct StreamRoleTests {
    @Test func aUserWhoMayStreamButNotDownloadNeverGetsTheOriginal() async throws {
        let fixture = try ServedLibrary(tracks: 2, seconds: 1)
        defer { fixture.remove() }
        let served = try InProcessServer(directory: fixture.library)
        let library = served.library
        let sam = try await library.addUser(name: "sam", password: "sam-pass")
        try await library.write { batch in try batch.setProfile(sam.id, roles: [.stream, .playlist]) }
        let (_, samKey) = try await library.createAPIKey(for: sam.id)
        let ann = try #require(try await library.user(named: "ann"))
        let (_, annKey) = try await library.createAPIKey(for: ann.id)
        let track = try #require(try await library.track(TrackID(1)))
        let original = try Data(contentsOf: URL(fileURLWithPath: track.path))

        func rest(_ endpoint: String, _ key: String, _ parameters: [(String, String)] = []) async -> InProcessServer.Answer {
            await served.request("GET", "/rest/\(endpoint)", query: [("apiKey", key), ("v", "1.16.1"), ("c", "tests"), ("id", "tr-1")] + parameters)
        }
        // Subsonic: a stream without a format is a transcode for sam, the file itself for ann.
        let samStream = await rest("stream", samKey)
        #expect(samStream.status == 200 && samStream.header("Content-Type") == "audio/mpeg", "\(samStream.status) \(samStream.text.prefix(200))")
        #expect(!samStream.body.isEmpty && samStream.body != original)
        let annStream = await rest("stream", annKey)
        #expect(annStream.body == original)
        // Asking for the original, or downloading it, is refused with error 50.
        #expect((await rest("stream", samKey, [("format", "raw")])).text.contains("code=\"50\""))
        #expect((await rest("download", samKey)).text.contains("code=\"50\""))
        #expect((await rest("download", annKey)).body == original)

        // /api/: the same rule (Opus when no format is named), and raw is 403.
        func api(_ key: String, _ query: [(String, String)] = []) async -> InProcessServer.Answer {
            await served.request("GET", "/api/stream/1", query: query, headers: ["authorization": "Bearer \(key)"])
        }
        let samAPI = await api(samKey)
        #expect(samAPI.status == 200 && samAPI.header("Content-Type") == "audio/ogg", "\(samAPI.status) \(samAPI.text.prefix(200))")
        #expect(!samAPI.body.isEmpty && samAPI.body != original)
        #expect((await api(samKey, [("format", "raw")])).status == 403)
        #expect((await api(annKey)).body == original)
        // getTranscodeDecision never offers sam direct play, even for a client that plays the file as it is.
        let clientInfo =
            #"{"name":"t","platform":"linux","directPlayProfiles":[{"containers":[],"audioCodecs":[],"protocols":["http"]}],"transcodingProfiles":[{"container":"mp3","audioCodec":"mp3","protocol":"http"}]}"#
        func decision(_ key: String) async -> String {
            await served.request(
                "POST", "/rest/getTranscodeDecision",
                query: [("apiKey", key), ("v", "1.16.1"), ("c", "tests"), ("mediaId", "tr-1"), ("mediaType", "song"), ("f", "json")],
                headers: ["content-type": "application/json"], body: Data(clientInfo.utf8)
            ).text
        }
        let samDecision = await decision(samKey)
        #expect(samDecision.contains("\"canDirectPlay\":false") && samDecision.contains("\"canTranscode\":true"), "\(samDecision)")
        #expect((await decision(annKey)).contains("\"canDirectPlay\":true"))
    }
}
