# frozen_string_literal: true

require_relative 'support'

# vectors/contract.json against every model as a real server started through
# the launcher: once with the test environment's backends (every backend the
# vectors need must then really answer), once with none (the 'unconfigured'
# answers), judging status, content type, body fields, substrings and timing.
class ContractTest < Minitest::Test
  CASES = JSON.parse(File.read(File.join(Support::VECTORS, 'contract.json')))['cases']
  # The models runtime.toml declares, in its order: the one list, read where iolab reads it.
  MODELS = File.read(File.join(__dir__, '..', 'runtime.toml')).scan(/^\[models\.([a-z0-9-]+)\]$/).flatten.freeze

  MODELS.each do |model|
    define_method("test_#{model.tr('-', '_')}_with_backends") { check(model, backends: true) }
    define_method("test_#{model.tr('-', '_')}_without_backends") { check(model, backends: false) }
  end

  private

  def check(model, backends:)
    configured = backends ? Support.backends : []
    target = Support.start(model, backends: backends)
    failures = CASES.filter_map do |c|
      status, type, body, ms = Support.get(target.url, c['path'])
      fault = judge(c, configured, model, status, type, body, ms)
      "#{c['name']}: #{fault} (got #{status} #{type} #{body[0, 200].inspect})" if fault
    end
    assert_empty failures, "#{model} (backends: #{configured.join(',')})"
  ensure
    assert_equal 0, Support.stop(target), 'exit code after SIGTERM' if target
  end

  def judge(c, configured, model, status, type, body, ms)
    needs = c['needs']&.to_sym
    expect = needs && !configured.include?(needs) ? c['unconfigured'] : c['expect']
    return any_contract_answer(status, body) if expect.nil?
    return "status #{status}, expected #{expect['status']}" if status != expect['status']
    return "content type #{type}" if expect['content_type'] && !type.start_with?(expect['content_type'])

    fields = expect['body'] && JSON.parse(body)
    (expect['body'] || {}).each do |k, v|
      v = model if v == '$model'
      return "body field #{k} is #{fields[k].inspect}, expected #{v.inspect}" if fields[k] != v
    end
    (expect['body_contains'] || []).each { |s| return "body lacks #{s.inspect}" unless body.include?(s) }
    return "took #{ms.round} ms < #{expect['min_ms']}" if expect['min_ms'] && ms < expect['min_ms']
    return "took #{ms.round} ms > #{expect['max_ms']}" if expect['max_ms'] && ms > expect['max_ms']

    nil
  end

  # A configured backend with nothing fixed to expect (e.g. a key that may be absent).
  def any_contract_answer(status, body)
    ok = JSON.parse(body)['ok']
    return nil if (status == 200 && ok == true) || (status >= 400 && ok == false)

    "not a contract answer: #{status}"
  end
end
