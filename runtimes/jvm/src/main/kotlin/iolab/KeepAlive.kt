// Works around reactor/reactor-netty#4361 (fixed in reactor-netty 1.3; Spring Boot 3.5 ships
// 1.2.18, which has it): Reactor Netty reads an HTTP/1.1 connection on demand, re-arming each
// read by hand. When a keep-alive request arrives before the previous request's operations
// have ended (its answer already sent), it is queued; if that queued request is then answered
// synchronously (a 404, /health, /metrics, a 400), nothing re-arms the read, and the next
// request on the connection sits unread in the socket until the client gives up. Seen as
// `GET /nope` timing out after a `/work` answered from another thread (loop-offload,
// loop-async), more often on a loaded machine. Asking for one more read after every complete
// answer is harmless (a request read early is queued, as designed) and closes the hole.
package iolab

import io.netty.channel.ChannelHandlerContext
import io.netty.channel.ChannelOutboundHandlerAdapter
import io.netty.channel.ChannelPromise
import io.netty.handler.codec.http.LastHttpContent
import org.springframework.boot.web.embedded.netty.NettyServerCustomizer
import reactor.netty.NettyPipeline

/** After the last part of each answer is written, ask the channel for the next request. */
class ResumeReadAfterAnswer : ChannelOutboundHandlerAdapter() {
    override fun write(ctx: ChannelHandlerContext, msg: Any, promise: ChannelPromise) {
        if (msg !is LastHttpContent) {
            ctx.write(msg, promise)
            return
        }
        val p = promise.unvoid()
        p.addListener { if (ctx.channel().isActive) ctx.channel().read() }
        ctx.write(msg, p)
    }

    override fun isSharable() = true

    companion object {
        private val INSTANCE = ResumeReadAfterAnswer()

        /** The customizer that puts it next to Reactor Netty's HTTP codec on every connection. */
        fun customizer() = NettyServerCustomizer { server ->
            server.doOnChannelInit { _, channel, _ ->
                val pipeline = channel.pipeline()
                if (pipeline.get(NettyPipeline.HttpCodec) != null && pipeline.get("iolab.resumeRead") == null) {
                    pipeline.addAfter(NettyPipeline.HttpCodec, "iolab.resumeRead", INSTANCE)
                }
            }
        }
    }
}
