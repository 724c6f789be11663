# Installs web/console's packages with `npm ci` when package-lock.json differs from the copy
# kept in node_modules after the last install (so several build trees share one install and a
# build with the packages in place never needs the network), then touches STAMP.
#   cmake -DNPM=npm -DDIR=web/console -DSTAMP=build/console/npm-ci.stamp -P npm_ci.cmake
set(lock ${DIR}/package-lock.json)
set(installed ${DIR}/node_modules/.toolport-package-lock.json)
set(install TRUE)
if(EXISTS ${installed})
  file(SHA256 ${lock} lock_hash)
  file(SHA256 ${installed} installed_hash)
  if(lock_hash STREQUAL installed_hash)
    set(install FALSE)
  endif()
endif()
if(install)
  execute_process(COMMAND ${NPM} ci --no-audit --no-fund WORKING_DIRECTORY ${DIR} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "npm ci in ${DIR} failed (${result})")
  endif()
  file(COPY_FILE ${lock} ${installed})
endif()
file(TOUCH ${STAMP})
