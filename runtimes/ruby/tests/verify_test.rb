# frozen_string_literal: true

require 'net/http'
require 'open3'
require_relative 'support'

# `iolab verify` (the contract gate, with real backend work checked against the
# backends' own counters) against every model started through the launcher; with
# --held (GET /ws and /events) for the models on Thin's reactor, while prefork
# (unicorn) answers both 501.
class VerifyTest < Minitest::Test
  include TargetHelpers

  %w[sequential pool loop-async prefork].each do |model|
    define_method("test_iolab_verify_#{model.tr('-', '_')}") { verify(model) }
  end

  private

  def verify(model)
    bin = ENV['IOLAB_BIN'].to_s
    skip 'IOLAB_BIN is not set' if bin.empty? && ENV['IOLAB_REQUIRE_BACKENDS'] != '1'
    flunk 'IOLAB_BIN is not set (IOLAB_REQUIRE_BACKENDS=1)' if bin.empty?

    flags = { pg: '--pg', mc: '--mc', http: '--http-backend' }.flat_map do |kind, flag|
      Support.backends.include?(kind) ? [flag, ENV[Support::BACKEND_ENV[kind]]] : []
    end
    with(model) do |t|
      held = model == 'prefork' ? [] : ['--held']
      out, status = Open3.capture2e(bin, 'verify', t.url, *flags, *held)
      warn "ruby #{model}: iolab verify: #{out.lines.last.to_s.strip}"
      assert status.success?, "iolab verify #{model}:\n#{out}"
      assert_equal 501, Net::HTTP.get_response(URI("#{t.url}/ws")).code.to_i if model == 'prefork'
    end
  end
end
