import Foundation

/// A file read for import: its tags, properties and audio identity. TagLib reads what it can
/// decode; a file it refuses goes to ffprobe only when `AudioLayout` finds an audio stream in it
/// (MP4 with FLAC, Opus, AC-3 or E-AC-3; RF64 and streamed WAV; ADTS; multiplexed Ogg; Matroska;
/// DSF; DSDIFF; tracker modules), so that damaged or foreign files keep TagLib's reason.
enum AudioFile {
    /// The tags and identity of the file at `url`; throws `TagError` or `FFprobeError`.
    static func read(_ url: URL) throws -> (AudioFileTags, String) {
        let (tags, identity, _) = try readForImport(url)
        return (tags, identity)
    }

    /// The same with the file's legacy identity (`AudioIdentity.identities`), for an import's lookup.
    static func readForImport(_ url: URL) throws -> (AudioFileTags, String, String?) {
        let foreign = AudioLayout.foreignToTagLib(url)
        var refusal = TagError.unreadable(path: url.path, reason: "no audio stream found in this container")
        if !foreign {
            switch Result(catching: { () throws(TagError) in try TagFile.read(url) }) {
            case .success(var tags):
                // TagLib reads no length for some very short files (an Ogg of 0.3 s, a page or two):
                // ffprobe's, when it is installed, rather than a song apps drop for having none.
                if tags.durationMilliseconds <= 0, let probed = try? FFprobe.onPath.get().read(url), probed.durationMilliseconds > 0 {
                    tags.durationMilliseconds = probed.durationMilliseconds
                }
                let identities = try AudioIdentity.identities(url)
                return (tags, identities.current, identities.legacy)
            case .failure(let error): refusal = error
            }
        }
        guard let layout = try? AudioLayout.detect(url) else { throw refusal }
        var tags = try FFprobe.onPath.get().read(url, layout: layout)
        // TagLib still reads the tags and cover of a container whose stream it cannot decode
        // (an MP4 holding FLAC, a module's title); those are the ones Shelf's editor writes.
        if !foreign, let own = try? TagFile.readTags(url) {
            tags.properties.merge(own.properties) { _, tagLib in tagLib }
            for key in own.properties.keys { tags.lists[key] = own.lists[key] }
            tags.picture = own.picture
            tags.pictureMimeType = own.pictureMimeType
        }
        let identities = try AudioIdentity.identities(url)
        return (tags, identities.current, identities.legacy)
    }
}
