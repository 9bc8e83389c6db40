// How many reply streams this tab is reading right now, known the moment a stream's response
// arrives. useChat's `status` says so only a render later: a refetch of the history that lands in
// between would put the server's page (the user's message, no reply yet) over the reply the
// stream has just started to show, and a held reply would stay hidden until its next part.
export interface OpenStreams {
  fetch: typeof fetch;
  /** Streams whose body is being read now. */
  count(): number;
}

export function trackOpenStreams(inner: typeof fetch): OpenStreams {
  let open = 0;
  const tracked: typeof fetch = async (input, init) => {
    const response = await inner(input, init);
    if (!response.ok || response.status === 204 || response.body === null) return response;
    open += 1;
    let counted = true;
    const done = () => {
      if (counted) {
        counted = false;
        open -= 1;
      }
    };
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done: ended, value } = await reader.read();
          if (ended) {
            done();
            controller.close();
          } else {
            controller.enqueue(value);
          }
        } catch (err) {
          done();
          controller.error(err);
        }
      },
      cancel(reason) {
        done();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch: tracked, count: () => open };
}
